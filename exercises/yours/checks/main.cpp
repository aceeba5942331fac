// The build-your-own checker: the stages linked into this program (1 ... N,
// see exercises/yours/CMakeLists.txt), in order, each re-checked before the
// next: a later stage must not break an earlier one.
//   yours_N [your folder]
#include "exercises/yours/checks/yours.h"

std::map<int, yours::Make>& yours::stages() {
  static std::map<int, Make> registered;
  return registered;
}

int main(int argc, char** argv) {
  std::vector<check::Exercise> stages;
  for (const auto& [n, make] : yours::stages()) stages.push_back(make());
  return check::run(stages, "Stage", argc > 1 ? argv[1] : "");
}
