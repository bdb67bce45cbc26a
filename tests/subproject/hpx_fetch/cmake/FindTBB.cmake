# Stands in for HPX 1.11's cmake/FindTBB.cmake, which is on HPX's
# CMAKE_MODULE_PATH when HPX adds LCI: it defines no TBB::tbb target, so LCI
# has to find oneTBB through oneTBB's own package config instead.
message(FATAL_ERROR "LCI used the parent's FindTBB.cmake; it must find oneTBB with find_package(TBB CONFIG)")
