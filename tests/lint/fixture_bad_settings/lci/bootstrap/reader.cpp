// For lint.settings.detects: reads one declared variable, one undeclared,
// and writes one (a write is not a read).
#include <cstdlib>

int reader() {
  setenv("LCI_WRITTEN_ONLY", "1", 1);
  const char* a = std::getenv("LCI_DECLARED");
  const char* b = std::getenv("LCI_UNDECLARED");
  return (a != nullptr) + (b != nullptr);
}
