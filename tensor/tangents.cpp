#include "tensor/tangents.h"

#include <unordered_map>

namespace ember {

namespace tangents {
size_t count = 0;
namespace {
std::unordered_map<const Storage*, std::shared_ptr<Storage>>& table() {
  static std::unordered_map<const Storage*, std::shared_ptr<Storage>> t;
  return t;
}
// The table's size, and the storages' hook (tensor/storage.h) set while it
// holds a tangent.
void set_count() {
  count = table().size();
  storage_freed_hook = count != 0 ? forget : nullptr;
}
}  // namespace
std::shared_ptr<Storage> of(const Storage* s) {
  if (count == 0) return nullptr;
  auto it = table().find(s);
  return it == table().end() ? nullptr : it->second;
}
void attach(const Storage* s, std::shared_ptr<Storage> tangent) {
  std::shared_ptr<Storage>& slot = table()[s];
  std::shared_ptr<Storage> old = std::move(slot);  // freed on return, after the table is updated
  slot = std::move(tangent);
  set_count();
}
void forget(const Storage* s) {
  auto it = table().find(s);
  if (it == table().end()) return;
  // The tangent is freed after the erase: a tangent can have a tangent of
  // its own, whose entry its destructor then erases in turn.
  std::shared_ptr<Storage> tangent = std::move(it->second);
  table().erase(it);
  set_count();
}
void clear() {
  // Moved out first: a tangent freed here is a Storage whose destructor
  // looks in the table.
  std::unordered_map<const Storage*, std::shared_ptr<Storage>> old;
  old.swap(table());
  set_count();
}
}  // namespace tangents

}  // namespace ember
