#include "autograd/grad_mode.h"

#include "autograd/autocast.h"

namespace ember {

namespace {
thread_local bool grad_enabled = true;
thread_local bool anomaly_enabled = false;
thread_local bool autocast_enabled = false;
}  // namespace

bool is_grad_enabled() { return grad_enabled; }
void set_grad_enabled(bool on) { grad_enabled = on; }
bool is_anomaly_enabled() { return anomaly_enabled; }
void set_anomaly_enabled(bool on) { anomaly_enabled = on; }
bool is_autocast_enabled() { return autocast_enabled; }
void set_autocast_enabled(bool on) { autocast_enabled = on; }

}  // namespace ember
