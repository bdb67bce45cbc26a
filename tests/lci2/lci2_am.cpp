#include "lci2_common.hpp"
int main(int argc, char** argv) { lci::g_runtime_init(); lci2_test::control_init(); int rc = lci2_test::run_doctest(argc, argv); lci2_test::control_fina(); lci::g_runtime_fina(); return rc; }
