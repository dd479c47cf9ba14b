#include "server/probes/command/command_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "server/probes/command/command_descendants.h"

extern char** environ;

namespace gpuprobe {
namespace {

// Closes its descriptors when it leaves scope.
struct Pipe {
  int fd[2] = {-1, -1};
  ~Pipe() {
    for (int f : fd) {
      if (f >= 0) close(f);
    }
  }
};

// The environment: the daemon's own with `env` laid over it.
std::vector<std::string> Environment(const std::map<std::string, std::string>& env) {
  std::vector<std::string> out;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    if (!env.contains(name)) out.push_back(entry);
  }
  for (const auto& [name, value] : env) out.push_back(absl::StrCat(name, "=", value));
  return out;
}

std::vector<char*> Pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// Back to SIG_DFL (the daemon blocks or handles some signals; the command starts afresh).
void ResetSignal(int signal) {
  struct sigaction action {};
  action.sa_handler = SIG_DFL;
  sigaction(signal, &action, nullptr);
}

// Starts `argv` in a process group of its own (whose id is its pid), with the daemon's
// environment and `env` laid over it, stdin from /dev/null, stdout and stderr into the pipes,
// whose write ends are closed here once the child holds them.
absl::StatusOr<pid_t> Spawn(const std::vector<std::string>& argv,
                            const std::map<std::string, std::string>& env, Pipe& out, Pipe& err) {
  std::vector<std::string> args = argv, envs = Environment(env);
  std::vector<char*> arg_pointers = Pointers(args), env_pointers = Pointers(envs);
  const int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null_fd < 0) return absl::InternalError(absl::StrCat("/dev/null: ", strerror(errno)));
  // fork and exec, not posix_spawn: the child asks for SIGKILL when the thread that started it
  // dies (a worker killed by its watchdog takes its command with it).
  const pid_t pid = fork();
  if (pid == 0) {
    // Only async-signal-safe calls until exec.
    setpgid(0, 0);  // a process group of its own
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int signal = 1; signal < NSIG; ++signal) ResetSignal(signal);
    dup2(null_fd, STDIN_FILENO);
    dup2(out.fd[1], STDOUT_FILENO);
    dup2(err.fd[1], STDERR_FILENO);
    execve(arg_pointers[0], arg_pointers.data(), env_pointers.data());
    _exit(127);
  }
  close(null_fd);
  if (pid < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("could not start ", argv[0], ": ", strerror(errno)));
  }
  setpgid(pid, pid);  // also here, so that the group exists before the first killpg
  close(out.fd[1]);
  close(err.fd[1]);
  out.fd[1] = err.fd[1] = -1;
  return pid;
}

// Waits up to 100 ms for output, then reads what is ready on each open pipe into `output`
// (counting stdout's lines), as far as the limits allow; a pipe at its end is closed in `open`.
// RESOURCE_EXHAUSTED names the limit the output broke.
absl::Status ReadReady(const Pipe& out, const Pipe& err, const CommandLimits& limits, bool open[2],
                       CommandOutput& output, int64_t& lines) {
  pollfd fds[2] = {{out.fd[0], POLLIN, 0}, {err.fd[0], POLLIN, 0}};
  for (int i = 0; i < 2; ++i) {
    if (!open[i]) fds[i].fd = -1;
  }
  poll(fds, 2, /*timeout_ms=*/100);
  absl::Status broke;
  for (int i = 0; i < 2; ++i) {
    if (!open[i] || fds[i].revents == 0) continue;
    char buffer[65536];
    const ssize_t n = read(i == 0 ? out.fd[0] : err.fd[0], buffer, sizeof(buffer));
    if (n <= 0) {
      open[i] = false;
      continue;
    }
    const int64_t total = static_cast<int64_t>(output.out.size() + output.err.size());
    const int64_t room = std::max<int64_t>(0, limits.max_output_bytes - total);
    std::string& to = i == 0 ? output.out : output.err;
    to.append(buffer, static_cast<size_t>(std::min<int64_t>(n, room)));
    if (i == 0) lines += std::count(buffer, buffer + std::min<int64_t>(n, room), '\n');
    if (n > room) {
      broke = absl::ResourceExhaustedError(
          absl::StrFormat("it printed more than max_output_bytes (%d bytes of stdout and stderr)",
                          limits.max_output_bytes));
    } else if (lines > limits.max_lines) {
      broke = absl::ResourceExhaustedError(
          absl::StrFormat("it printed more than max_lines (%d lines of stdout)", limits.max_lines));
    }
  }
  return broke;
}

}  // namespace

absl::StatusOr<CommandOutput> RunBoundedCommand(const std::vector<std::string>& argv,
                                                const std::map<std::string, std::string>& env,
                                                const CommandLimits& limits,
                                                const std::atomic<bool>& cancelled,
                                                const std::function<void(int)>& on_started,
                                                const std::function<void()>& on_tick,
                                                CommandOutput* partial) {
  Pipe out, err;
  if (pipe2(out.fd, O_CLOEXEC) != 0 || pipe2(err.fd, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("pipe: ", strerror(errno)));
  }
  CommandRun run = CommandRun::Begin();
  std::map<std::string, std::string> run_env = env;
  run_env[kCommandRunVariable] = run.token();
  absl::StatusOr<pid_t> spawned = Spawn(argv, run_env, out, err);
  if (!spawned.ok()) return spawned.status();
  const pid_t pid = *spawned;
  run.Started(pid);
  const pid_t group = pid;
  on_started(group);

  CommandOutput output;
  absl::Status stopped;  // why the run was stopped; OK while it runs its course
  absl::Time term_sent = absl::InfiniteFuture();
  const absl::Time start = absl::Now();
  absl::Time next_tick = start + absl::Seconds(1);
  int64_t lines = 0;
  bool open[2] = {true, true};
  int status = 0;
  bool exited = false;
  absl::Time exited_at = absl::InfiniteFuture();
  auto stop = [&](absl::Status why) {
    if (!stopped.ok()) return;
    stopped = std::move(why);
    killpg(group, SIGTERM);
    term_sent = absl::Now();
  };
  // Kills what it left running after it exited: an error, unless the run already is one.
  auto kill_left_behind = [&] {
    killpg(group, SIGKILL);
    if (stopped.ok()) {
      stopped = absl::FailedPreconditionError(
          "it left processes of its own running after it exited; they were killed");
    }
  };
  // Until it has exited and its output is closed, whichever comes last: a command that closes
  // its output and runs on is held to max_seconds and cancellation as one that prints.
  while (open[0] || open[1] || !exited) {
    if (absl::Status read = ReadReady(out, err, limits, open, output, lines); !read.ok()) {
      stop(std::move(read));
    }
    const absl::Time now = absl::Now();
    if (now - start > limits.max_time) {
      stop(absl::DeadlineExceededError(absl::StrFormat("it ran past max_seconds (%.0f s)",
                                                       absl::ToDoubleSeconds(limits.max_time))));
    }
    if (cancelled.load()) stop(absl::CancelledError("cancelled"));
    if (!exited && waitpid(pid, &status, WNOHANG) == pid) {
      exited = true;
      exited_at = now;
    }
    // Exited, yet its output stays open: a process it left behind holds it.
    if (now - exited_at > absl::Milliseconds(500)) {
      kill_left_behind();
      break;
    }
    if (now - term_sent > limits.term_grace) {
      killpg(group, SIGKILL);
      stopped = absl::Status(stopped.code(),
                             absl::StrCat(stopped.message(), "; it did not stop on SIGTERM within ",
                                          absl::FormatDuration(limits.term_grace),
                                          ", so its process group was killed"));
      term_sent = absl::InfiniteFuture();
    }
    if (now >= next_tick) {
      on_tick();
      next_tick = now + absl::Seconds(1);
    }
  }
  // It exited: whatever of its own it left (its group, a child in a session of its own, a
  // daemon's double fork) is killed, and the run waits until they are gone.
  output.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  output.pids = run.KillLeftBehind(pid);
  if (!output.pids.empty()) kill_left_behind();
  output.pids.insert(pid);
  if (!stopped.ok()) {
    if (partial != nullptr) *partial = std::move(output);
    return stopped;
  }
  return output;
}

}  // namespace gpuprobe
