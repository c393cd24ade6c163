// Names and scheduling niceness of the calling thread (Linux).
//
// Every long-lived thread of the engine names itself (top -H, perf and
// /proc/PID/task/*/comm show the name instead of the program's), and the
// txg sync thread runs at a lower priority than the threads that serve
// requests (TxgOptions::sync_thread_nice).
#pragma once

#include <string_view>

#include "arcstore/status.h"

namespace arcstore {

// Sets the calling thread's name; at most 15 bytes are kept.
void NameThisThread(std::string_view name);

// Sets the calling thread's nice value (0 = normal, 19 = lowest), for this
// thread alone; threads it starts later inherit it. Raising it needs no
// privilege; lowering it below the thread's current value may.
Status NiceThisThread(int nice);

// The calling thread's nice value.
int ThisThreadNice();

}  // namespace arcstore
