#include "base/thread_name.h"

#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace arcstore {
namespace {

// On Linux, PRIO_PROCESS with a thread id applies to that thread alone.
id_t ThisThreadId() { return static_cast<id_t>(::syscall(SYS_gettid)); }

}  // namespace

void NameThisThread(std::string_view name) {
  const std::string kept(name.substr(0, 15));  // the kernel's limit, 16 with the NUL
  (void)pthread_setname_np(pthread_self(), kept.c_str());
}

Status NiceThisThread(int nice) {
  if (nice < 0 || nice > 19) {
    return Status::InvalidArgument("nice " + std::to_string(nice) + " out of bounds [0, 19]");
  }
  if (::setpriority(PRIO_PROCESS, ThisThreadId(), nice) != 0) {
    return Status::IOError(std::string("setpriority(") + std::to_string(nice) +
                           "): " + std::strerror(errno));
  }
  return Status::Ok();
}

int ThisThreadNice() {
  errno = 0;
  const int nice = ::getpriority(PRIO_PROCESS, ThisThreadId());
  return errno == 0 ? nice : 0;
}

}  // namespace arcstore
