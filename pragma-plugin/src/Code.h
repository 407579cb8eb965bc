//===- Code.h - Generated text --------------------------------------------===//
//
// The lowered code is C that a C++ compiler also accepts, except where C++ needs its own forms
// (placement new of the argument block; inline tasks and function templates as local classes
// with references as aliases of the captured variables). Generated names start with
// 'nanort_'. Every user expression is emitted on a line of its own after '#line', padded to
// its column, so that errors inside clause arguments point at the user's line and column;
// after each generated block a '#line' puts the following user text back at its own line and
// column.
//
//===----------------------------------------------------------------------===//
#ifndef NANORT_PLUGIN_CODE_H
#define NANORT_PLUGIN_CODE_H

#include "Lowering.h"
#include "Pragma.h"

#include "clang/Basic/SourceManager.h"

#include <map>
#include <string>

namespace nanort {
namespace lowering {

// Private to the lowering's files, which all speak Clang's names.
using namespace clang;

// Generated code, with user expressions at their own lines and columns.
class Code {
public:
  Code(const SourceManager &SM) : SM(SM) {}
  Code &operator<<(const std::string &T) {
    S += T;
    return *this;
  }
  Code &operator<<(const char *T) {
    S += T;
    return *this;
  }
  Code &operator<<(unsigned N) {
    S += std::to_string(N);
    return *this;
  }
  // A user expression, each token at its own line and column.
  Code &user(const Toks &T) {
    if (T.empty())
      return *this;
    PresumedLoc First = SM.getPresumedLoc(T.front().Loc);
    if (First.isInvalid()) {
      S += joinTokens(T);
      return *this;
    }
    S += "\n#line " + std::to_string(First.getLine()) + " \"" + escape(First.getFilename()) +
         "\"\n";
    unsigned Line = First.getLine(), Col = 1;
    for (size_t I = 0; I < T.size(); ++I) {
      const Tok &K = T[I];
      PresumedLoc P = SM.getPresumedLoc(K.Loc);
      if (P.isValid() && P.getLine() == Line && P.getColumn() >= Col) {
        S.append(P.getColumn() - Col, ' ');
        Col = P.getColumn();
      } else {
        S += ' ';
        ++Col;
      }
      std::string Text = K.Text;
      if (Subst && K.Kind == tok::identifier &&
          (I == 0 || (T[I - 1].Kind != tok::period && T[I - 1].Kind != tok::arrow))) {
        auto It = Subst->find(K.Text);
        if (It != Subst->end())
          Text = It->second;
      }
      S += Text;
      Col += Text.size();
    }
    S += "\n";
    return *this;
  }
  // C: inside an outlined inline task, how generated code spells the variables that the task
  // shares ((*nanort_a->x)); null elsewhere.
  const std::map<std::string, std::string> *Subst = nullptr;
  // Makes the text that follows appear at Loc's line and column.
  Code &at(SourceLocation Loc) {
    S += marker(SM, Loc);
    return *this;
  }
  std::string str() const { return S; }

  static std::string escape(StringRef In) { return escapeStringLiteral(In); }
  static std::string marker(const SourceManager &SM, SourceLocation Loc) {
    PresumedLoc P = SM.getPresumedLoc(Loc);
    if (P.isInvalid())
      return "\n";
    return "\n#line " + std::to_string(P.getLine()) + " \"" + escape(P.getFilename()) + "\"\n" +
           std::string(P.getColumn() - 1, ' ');
  }

private:
  const SourceManager &SM;
  std::string S;
};

// Text as C string literals, one line each ("...\n"), each on its own line of the generated
// code; '?' escaped against trigraphs, carriage returns and control characters dropped.
std::string quotedLines(StringRef Text);
// Text that a printf format prints as it is.
std::string printfText(StringRef Text);
// A C string literal ('?' escaped against trigraphs).
std::string cLiteral(StringRef Text);
// NANORT_IN, NANORT_OUT, ... for an access mode.
const char *modeName(AccessMode M);

} // namespace lowering
} // namespace nanort

#endif
