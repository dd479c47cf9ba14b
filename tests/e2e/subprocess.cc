#include "tests/e2e/subprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

extern char** environ;

namespace gpuprobe::testing_support {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

absl::StatusOr<pid_t> Spawn(const std::vector<std::string>& argv,
                            const std::vector<std::string>& env_additions,
                            const std::string& out_path, const std::string& err_path) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (err_path == out_path) {
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  } else {
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
  }
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) env_strings.emplace_back(*e);
  for (const std::string& add : env_additions) env_strings.push_back(add);
  std::vector<char*> envp, args;
  for (std::string& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (std::string& a : argv_copy) args.push_back(a.data());
  args.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return absl::InternalError(absl::StrCat("posix_spawn ", argv[0], ": ", rc));
  return pid;
}

absl::StatusOr<int> WaitExit(pid_t pid, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    int status = 0;
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) {
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    if (absl::Now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return absl::DeadlineExceededError("child did not exit in time; killed");
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
}

}  // namespace

absl::StatusOr<CommandResult> RunCommand(const std::vector<std::string>& argv,
                                         const std::vector<std::string>& env_additions,
                                         const std::string& work_dir, absl::Duration timeout) {
  static int counter = 0;
  const std::string base = absl::StrCat(work_dir, "/cmd", ++counter);
  absl::StatusOr<pid_t> pid = Spawn(argv, env_additions, base + ".out", base + ".err");
  if (!pid.ok()) return pid.status();
  absl::StatusOr<int> code = WaitExit(*pid, timeout);
  CommandResult result{code.ok() ? *code : -1, ReadFile(base + ".out"), ReadFile(base + ".err")};
  unlink((base + ".out").c_str());
  unlink((base + ".err").c_str());
  if (!code.ok()) return code.status();
  return result;
}

absl::StatusOr<ChildProcess> ChildProcess::Start(const std::vector<std::string>& argv,
                                                 const std::string& log_path,
                                                 const std::vector<std::string>& env_additions) {
  absl::StatusOr<pid_t> pid = Spawn(argv, env_additions, log_path, log_path);
  if (!pid.ok()) return pid.status();
  return ChildProcess(*pid, log_path);
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && waitpid(pid_, nullptr, WNOHANG) == 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
}

absl::StatusOr<std::string> ChildProcess::AwaitLog(const std::string& needle,
                                                   absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    const std::string log = Log();
    if (const size_t at = log.find(needle); at != std::string::npos) {
      const size_t start = at + needle.size();
      return log.substr(start, log.find_first_of(" \n", start) - start);
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
  return absl::DeadlineExceededError(absl::StrCat("no \"", needle, "\" in log:\n", Log()));
}

absl::StatusOr<std::string> ChildProcess::GrpcAddress(absl::Duration timeout) {
  absl::StatusOr<std::string> port = AwaitLog(" listening on 127.0.0.1:", timeout);
  if (!port.ok()) return port.status();
  return "127.0.0.1:" + *port;
}

absl::StatusOr<std::string> ChildProcess::HttpAddress(absl::Duration timeout) {
  absl::StatusOr<std::string> port = AwaitLog("http listening on 127.0.0.1:", timeout);
  if (!port.ok()) return port.status();
  return "127.0.0.1:" + *port;
}

absl::StatusOr<int> ChildProcess::StopWith(int signal, absl::Duration timeout) {
  kill(pid_, signal);
  absl::StatusOr<int> code = WaitExit(pid_, timeout);
  pid_ = -1;
  return code;
}

std::string ChildProcess::Log() const { return ReadFile(log_path_); }

}  // namespace gpuprobe::testing_support
