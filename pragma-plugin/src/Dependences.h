//===- Dependences.h - Dependence items and their checks ------------------===//
//
// The code of one dependence item (Dependences.cpp), shared by task clauses, reductions and
// taskwait: declared in a block of its own, its sections checked when the task is created.
//
//===----------------------------------------------------------------------===//
#ifndef NANORT_PLUGIN_DEPENDENCES_H
#define NANORT_PLUGIN_DEPENDENCES_H

#include "Code.h"

#include <functional>
#include <map>
#include <string>

namespace nanort {
namespace lowering {

// Where a dependence item is, for the checks of its sections when the task is created:
// "nanort: f.c:12: task 'scale': " (or "... taskwait "), followed by the item as written.
struct ItemChecks {
  std::string Where;
  const char *Task; // the task being created (dropped before the program ends), or "0"
  bool *Used; // set when a check is emitted: the prelude then defines nanort_section_error
  DiagSink *Diags; // a constant start before the base is an error at compile time
  std::function<BaseKind(const DepItem &)> Kind;
};

// One dependence item, inside a block of its own (nanort_p, and nanort_size or the 2-D sizes).
void emitItem(Code &C, const DepItem &D, bool CPP, const ItemChecks &Check);

// A multidependence ({v[i], i=0;n}): a loop per iterator, outer first, around the item's own
// block, with the iterator declared as an int of the user's name, which the item's
// expressions use (the runtime takes accesses one call at a time). Returns the number of
// blocks to close. In C inside another inline task, the iterators hide the outer task's
// shared variables of the same names: Saved keeps the substitutions to restore.
struct IteratorScope {
  std::map<std::string, std::string> Subst;
  const std::map<std::string, std::string> *Saved = nullptr;
  unsigned Open = 0;
};
void openIterators(Code &C, const DepItem &D, const ItemChecks &Check, IteratorScope &S);
void closeIterators(Code &C, IteratorScope &S);

// nanort_task_access / nanort_task_copy of one item, 1-D or 2-D.
void emitAccess(Code &C, const DepItem &D, const char *Fn, const char *Mode, bool CPP,
                const ItemChecks &Check);
// A dependence of a taskloop's chunk that names the loop variable.
// Vars: each loop's (type, variable), one per collapsed level.
void emitTaskloopAccess(Code &C, const DepItem &D,
                        const std::vector<std::pair<std::string, std::string>> &Vars, bool CPP,
                        const ItemChecks &Check);

} // namespace lowering
} // namespace nanort

#endif
