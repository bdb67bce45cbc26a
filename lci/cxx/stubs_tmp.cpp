// Temporary: graph and collectives land next.
#include <stdexcept>
#include "lci.hpp"
namespace lci { namespace detail {
[[noreturn]] static void ni(const char* w) { throw std::runtime_error(std::string("lci::") + w + ": not implemented yet"); }
comp_t alloc_graph(comp_t, const char*, void*) { ni("alloc_graph"); }
graph_node_t graph_add_node(comp_t, graph_node_run_cb_t, void*, graph_node_free_cb_t) { ni("graph_add_node"); }
void graph_add_edge(comp_t, graph_node_t, graph_node_t, graph_edge_run_cb_t) { ni("graph_add_edge"); }
void graph_node_mark_complete(graph_node_t, status_t) { ni("graph_node_mark_complete"); }
void graph_start(comp_t) { ni("graph_start"); }
status_t graph_test(comp_t) { ni("graph_test"); }
void barrier(const coll_args&) { ni("barrier"); }
void broadcast(void*, size_t, int, const coll_args&) { ni("broadcast"); }
void reduce(const void*, void*, size_t, size_t, reduce_op_t, int, const coll_args&) { ni("reduce"); }
void allreduce(const void*, void*, size_t, size_t, reduce_op_t, const coll_args&) { ni("allreduce"); }
void reduce_scatter(const void*, void*, size_t, size_t, reduce_op_t, const coll_args&) { ni("reduce_scatter"); }
void allgather(const void*, void*, size_t, const coll_args&) { ni("allgather"); }
void alltoall(const void*, void*, size_t, const coll_args&) { ni("alltoall"); }
}}
