/// @file
/// Grad mode: a thread-local switch. While it is off (inside a NoGradGuard),
/// ops compute values and record nothing, so no graph is built.
#pragma once

namespace ember {

bool is_grad_enabled();
void set_grad_enabled(bool on);

/// RAII: turns grad recording off for its scope, restores the previous mode after.
class NoGradGuard {
 public:
  NoGradGuard() : prev_(is_grad_enabled()) { set_grad_enabled(false); }
  ~NoGradGuard() { set_grad_enabled(prev_); }
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool prev_;
};

/// RAII: turns grad recording on for its scope (inside a NoGradGuard too),
/// restores the previous mode after.
class EnableGradGuard {
 public:
  EnableGradGuard() : prev_(is_grad_enabled()) { set_grad_enabled(true); }
  ~EnableGradGuard() { set_grad_enabled(prev_); }
  EnableGradGuard(const EnableGradGuard&) = delete;
  EnableGradGuard& operator=(const EnableGradGuard&) = delete;

 private:
  bool prev_;
};

/// RAII: sets grad mode to `on` for its scope, restores the previous mode after
/// (the engine's: on exactly when a backward records, create_graph).
class GradModeGuard {
 public:
  explicit GradModeGuard(bool on) : prev_(is_grad_enabled()) { set_grad_enabled(on); }
  ~GradModeGuard() { set_grad_enabled(prev_); }
  GradModeGuard(const GradModeGuard&) = delete;
  GradModeGuard& operator=(const GradModeGuard&) = delete;

 private:
  bool prev_;
};

/// Anomaly mode: backward checks every gradient it computes and raises an error
/// naming the first node whose output contains NaN or Inf.
bool is_anomaly_enabled();
void set_anomaly_enabled(bool on);
class AnomalyGuard {
 public:
  AnomalyGuard() : prev_(is_anomaly_enabled()) { set_anomaly_enabled(true); }
  ~AnomalyGuard() { set_anomaly_enabled(prev_); }
  AnomalyGuard(const AnomalyGuard&) = delete;
  AnomalyGuard& operator=(const AnomalyGuard&) = delete;

 private:
  bool prev_;
};

}  // namespace ember
