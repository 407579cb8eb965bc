//===- Code.cpp - Generated text ------------------------------------------===//
#include "Code.h"

using namespace clang;

namespace nanort {
namespace lowering {

std::string quotedLines(StringRef Text) {
  std::string Lit;
  while (!Text.empty()) {
    auto [Line, Rest] = Text.split('\n');
    Lit += "\n  \"";
    for (char Ch : Line) {
      if (Ch == '\\' || Ch == '"' || Ch == '?')
        Lit += '\\';
      if (Ch == '\t' || (unsigned char)Ch >= 0x20)
        Lit += Ch;
    }
    Lit += "\\n\"";
    Text = Rest;
  }
  return Lit;
}

std::string printfText(StringRef Text) {
  std::string S;
  for (char Ch : Text) {
    if (Ch == '%')
      S += '%';
    S += Ch;
  }
  return S;
}

std::string cLiteral(StringRef Text) {
  std::string S = "\"";
  for (char Ch : Text) {
    if (Ch == '\n') {
      S += "\\n";
      continue;
    }
    if (Ch == '\\' || Ch == '"' || Ch == '?')
      S += '\\';
    S += Ch;
  }
  return S + "\"";
}

const char *modeName(AccessMode M) {
  switch (M) {
  case AccessMode::In:
    return "NANORT_IN";
  case AccessMode::Out:
    return "NANORT_OUT";
  case AccessMode::Inout:
    return "NANORT_INOUT";
  case AccessMode::Concurrent:
    return "NANORT_CONCURRENT";
  case AccessMode::Commutative:
    return "NANORT_COMMUTATIVE";
  }
  return "NANORT_INOUT";
}

} // namespace lowering
} // namespace nanort
