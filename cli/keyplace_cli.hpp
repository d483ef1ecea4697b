// keyplace-cli: the operator's view of placement. The program lives in headers so the tests
// can run it in-process on string streams; run.cpp compiles run() once and main.cpp only
// forwards argv to it. A caller of run() alone includes run.hpp.
//   args.hpp            exit statuses, failures, option parsing and typed options
//   spec.hpp            node SPECs and key lines
//   output.hpp          numbers, tables, JSON, help columns
//   registry.hpp        one entry per hash function and strategy; option checks and dispatch
//   stream.hpp          keys read a block at a time, output held until all is valid, progress
//   components.hpp      the optional components (snapshots, etcd) and the line a missing one gives
//   commands.hpp        the command table; usage, help; execute()
//   run.hpp             run(), the entry point, declared (defined in run.cpp)
// Each command family's bodies are in its *_impl.hpp (or *_commands.hpp) and compiled in its own
// source: hash.cpp, locate.cpp, diff.cpp, stats.cpp, planning.cpp, snapshot.cpp, etcd.cpp.
#ifndef KEYPLACE_CLI_KEYPLACE_CLI_HPP_INCLUDED
#define KEYPLACE_CLI_KEYPLACE_CLI_HPP_INCLUDED

#include "args.hpp"
#include "commands.hpp"
#include "components.hpp"
#include "output.hpp"
#include "registry.hpp"
#include "run.hpp"
#include "spec.hpp"
#include "stream.hpp"

#endif
