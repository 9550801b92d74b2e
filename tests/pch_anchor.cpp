// The target that owns the test executables' precompiled header (tests/CMakeLists.txt, HDB_TEST_PCH):
// it compiles the header once; the GoogleTest executables reuse it. Built, never run.
int main() { return 0; }
