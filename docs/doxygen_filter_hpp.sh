#!/bin/sh
# Doxygen input filter for lci.hpp (docs/Doxyfile.in, FILTER_PATTERNS): the
# header's comments are plain // comments; this shows them to Doxygen as
# documentation without changing a line number (each rewritten line stays
# one line). What it does, in order:
#  - the opening comment becomes the file's description;
#  - a "// ---- section ----" ruler opens the section's Doxygen group
#    (cxx_types, cxx_runtime, cxx_resources, ... below), closing the one
#    before; the last closes at the end of namespace lci;
#  - a comment line before a declaration documents it (its first sentence
#    is the brief description), and a trailing "// ..." after a member or
#    an enumerator documents that member;
#  - the members that the LCI_CXX_* macros generate (resource handles,
#    attribute getters, the setters of the operation objects foo_x) are
#    written out, documented, in place of each use of a macro (the macro
#    definitions themselves are left alone, and excluded by the Doxyfile);
#  - the constructors, call() and operator()() of each operation object
#    foo_x, and its class when no comment precedes it, get a comment that
#    refers to the function foo(), where the operation is described.
# A setter's argument is described by the table `arg` below where the name
# is common to many operations, and otherwise refers to foo().
exec awk '
# A comment block: its first sentence is the brief description (the
# Doxyfile keeps JAVADOC_AUTOBRIEF off), the rest the details.
function doc(s,   i) {
  if (s !~ /^@/ && (i = index(s, ". ")) > 0)
    s = "@brief " substr(s, 1, i) " @details " substr(s, i + 2)
  else if (s !~ /^@/)
    s = "@brief " s
  return "/** " s " */ "
}
# A pointer to a handle: the object a free call frees (the handle is then
# made empty).
function freed(op) { return "in/out: the handle of the object, made empty by lci::" op "()." }
function argdesc(name, op) {
  if (name in arg) return arg[name]
  return "the argument `" name "`, as described at lci::" op "()."
}
# A setter: returns the object, so that setters chain.
function setter(cls, type, name, desc,   op) {
  op = cls; sub(/_x$/, "", op)
  if (desc == "") desc = (type ~ handle_ptr) ? freed(op) : argdesc(name, op)
  return doc("Sets the optional argument `" name "` of lci::" op "(). @param v " desc \
             " @return this object, to set further arguments or to run it.") \
         cls "&& " name "(" type " v);"
}
function runner(ret, cls,   op, r) {
  op = cls; sub(/_x$/, "", op)
  r = (ret == "void") ? "" : " @return what lci::" op "() returns."
  return doc("Runs the operation with the arguments set so far." r) ret " call() const; " \
         doc("Runs the operation (the same as call())." r) ret " operator()() const;"
}
function trim(s) { gsub(/^[ \t]+|[ \t]+$/, "", s); return s }
# The parameter names of a parameter list "t1 n1, t2 n2".
function paramdocs(list, op,   n, i, parts, p, name, out) {
  n = split(list, parts, ",")
  out = ""
  for (i = 1; i <= n; i++) {
    p = trim(parts[i]); if (p == "") continue
    name = p; sub(/.*[ *&]/, "", name)
    out = out " @param " name " " ((p ~ handle_ptr) ? freed(op) : argdesc(name, op))
  }
  return out
}
function ctor_doc(sig, cls,   op, inner) {
  op = cls; sub(/_x$/, "", op)
  inner = sig; sub(/^[^(]*\(/, "", inner); sub(/\).*$/, "", inner)
  if (trim(inner) == "")
    return doc("An operation object for lci::" op "(), every optional argument at its default.")
  return doc("An operation object for lci::" op "() with its positional arguments; every " \
             "optional argument keeps its default until its setter is called." \
             paramdocs(inner, op))
}
function group_open(title,   g, t) {
  g = ""
  if (title ~ /^basic types/) { g = "cxx_types"; t = "Basic types and constants (lci.hpp)" }
  else if (title ~ /^resources/) { g = "cxx_resources"; t = "Resources: handles and attributes (lci.hpp)" }
  else if (title ~ /^status/) { g = "cxx_comm"; t = "Communication (lci.hpp)" }
  else if (title ~ /^completion objects/) { g = "cxx_completion"; t = "Completion objects (lci.hpp)" }
  else if (title ~ /^the process/) { g = "cxx_runtime"; t = "The process and the runtime (lci.hpp)" }
  else if (title ~ /^packet pools/) { g = "cxx_resources"; t = "Resources: handles and attributes (lci.hpp)" }
  else if (title ~ /^memory registration/) { g = "cxx_memory"; t = "Memory registration (lci.hpp)" }
  else if (title ~ /^communication/) { g = "cxx_comm"; t = "Communication (lci.hpp)" }
  else if (title ~ /^the network layer/) { g = "cxx_net"; t = "The network layer (lci.hpp)" }
  else if (title ~ /^progress/) { g = "cxx_progress"; t = "Progress (lci.hpp)" }
  else if (title ~ /^collectives/) { g = "cxx_collectives"; t = "Collectives (lci.hpp)" }
  else if (title ~ /^helpers for completion graphs/) { g = "cxx_completion"; t = "Completion objects (lci.hpp)" }
  if (g == "") return ""
  o = (g in seen) ? "" : "/** @defgroup " g " " t " \\ilinebr " gdesc[g] " */ "
  seen[g] = 1
  return o "/** @addtogroup " g " */ /** @{ */"
}
BEGIN {
  handle_ptr = "^(runtime|device|endpoint|packet_pool|matching_engine|net_context|comp|mr)_t[*]"
  arg["runtime"] = "the runtime (default: the global runtime, g_runtime_init())."
  arg["device"] = "the device (default: the runtime'"'"'s default device)."
  arg["endpoint"] = "the endpoint (default: the device'"'"'s default endpoint)."
  arg["packet_pool"] = "the packet pool (default: the runtime'"'"'s default packet pool)."
  arg["matching_engine"] = "the matching engine (default: the runtime'"'"'s default matching engine, which the device'"'"'s endpoints match in)."
  arg["mr"] = "the registration of the local buffer (default MR_HOST: the buffer is registered as needed)."
  arg["user_context"] = "a value of the program'"'"'s, reported unchanged (in an operation'"'"'s status, or by get_attr_user_context()); default nullptr."
  arg["name"] = "a name, reported by get_attr_name() (default DEFAULT_NAME); the string is not copied and must outlive the object."
  arg["allow_done"] = "false: an operation that would complete in the call is posted instead, and its completion object signalled (default true)."
  arg["allow_posted"] = "false: the call progresses the device until the operation completed, and returns done (default true)."
  arg["allow_retry"] = "false: an operation refused for lack of resources goes into the device'"'"'s backlog and returns done_backlog or posted_backlog instead of retry (default true). Concepts: Back-pressure and LCI_ERR_RETRY."
  arg["comp_semantic"] = "when an outgoing operation counts as complete (default comp_semantic_t::memory)."
  arg["matching_policy"] = "what a send and a receive must agree on (default matching_policy_t::rank_tag)."
  arg["rank"] = "the peer'"'"'s rank, in [0, get_rank_n()) (a receive also takes ANY_SOURCE)."
  arg["local_buffer"] = "the local buffer; the caller keeps it and keeps it valid until the operation completed."
  arg["size"] = "the size in bytes."
  arg["local_comp"] = "the completion object signalled when a posted operation completes; COMP_NULL or COMP_NULL_RETRY: none."
  arg["tag"] = "the tag, at most runtime_t::get_attr_max_tag() (a receive also takes ANY_TAG)."
  arg["remote_comp"] = "the target'"'"'s completion object, by its register_rcomp() handle (0: none, for a put or get)."
  arg["remote_disp"] = "the offset in bytes from rmr.base at the target."
  arg["rmr"] = "the target'"'"'s registration, as get_rmr() returned it there."
  arg["direction"] = "direction_t::OUT: a send (post_send); direction_t::IN: a receive (post_recv)."
  arg["buffer"] = "the buffer; the caller keeps it."
  arg["offset"] = "the offset in bytes from rmr.base at the target."
  arg["comp"] = "the completion object."
  arg["imm_data"] = "the immediate data, reported in the target'"'"'s net_status_t (default 0)."
  arg["required_atomic_scope"] = "the atomicity the call needs (default net_atomic_scope_t::GLOBAL); a scope the network does not give returns errorcode_t::fatal."

  gdesc["cxx_types"] = "Enumerations, small value types and constants of the LCI 2 interface. Concepts: Completion kinds, Errors and failures."
  gdesc["cxx_resources"] = "Handles of the LCI 2 resources (runtime_t, device_t, endpoint_t, packet_pool_t, matching_engine_t, net_context_t), their attributes, and the calls that allocate and free them. A handle is one pointer, copied freely; it names an object until the matching free call. Allocations and frees are not thread-safe: make them from one thread (usually at set-up), in the same order on every rank where the call says it is collective. Concepts: Devices, Endpoints and property lists."
  gdesc["cxx_comm"] = "Posting operations (post_send, post_recv, post_am, post_put, post_get, post_comm and their operation objects foo_x) and the status they return. Each returns a status_t: done (complete in the call; the completion object is not signalled), posted (the completion object will be signalled once, from progress) or retry (nothing happened: progress, then call again). Posting is thread-safe. Concepts: Message flow, Completion kinds, Buffer ownership, Back-pressure and LCI_ERR_RETRY."
  gdesc["cxx_completion"] = "Completion objects: synchronizers, counters, completion queues, handlers, graphs and a program'"'"'s own comp_impl_t, and the remote handles (rcomp_t) that name them to peers. Concepts: Completion kinds."
  gdesc["cxx_runtime"] = "The process-wide set-up (global_initialize), the default attributes, and runtimes (alloc_runtime, g_runtime_init). Concepts: Threading, Errors and failures."
  gdesc["cxx_memory"] = "Registration of local memory for puts and gets (register_memory) and the remote side of a registration (rmr_t). Concepts: Buffer ownership."
  gdesc["cxx_net"] = "The raw operations of a device, completed through net_poll_cq as net_status_t instead of through completion objects; here an emulation over the messages and one-sided operations of the core (docs/lci2.md, The network layer)."
  gdesc["cxx_progress"] = "Progress and the backlog of a device: nothing completes unless some thread progresses the device. Concepts: Progress, Back-pressure and LCI_ERR_RETRY."
  gdesc["cxx_collectives"] = "Collectives over a device'"'"'s messages: every rank calls them, on each device in the same order; each runs to its end in the call, progressing the device. Not thread-safe on one device: one thread at a time calls the collectives of a device. Concepts: Progress."
}
NR == 1 { header = 1 }
NR == 1 && /^\/\/ lci\.hpp - / { sub(/^\/\/ lci\.hpp - /, "/// \\file lci.hpp "); print; next }
header && /^\/\// { sub(/^\/\/ ?/, "/// "); print; next }
{ header = 0 }
# A constructor of an operation object whose parameter list runs on: the
# lines are held until it closes, then printed with the comment before the
# first.
pending != "" {
  held = held "\n" $0; sig = sig " " $0
  if (index($0, ")") > 0) { print ctor_doc(sig, cls) held; pending = ""; held = "" }
  was_comment = 0
  next
}
# Macro definitions, and the lines they continue on, stay as they are.
in_define || /^#[ \t]*define/ {
  in_define = /\\[ \t]*$/
  print; was_comment = 0; next
}
/^[ \t]*\/\/ ----/ {
  t = $0; sub(/^[ \t]*\/\/ ---- /, "", t)
  o = group_open(t)
  if (o != "") {
    print (open ? "/** @} */ " : "") o " " $0
    open = 1
  } else print
  was_comment = 0; next
}
/^}  \/\/ namespace lci$/ { print (open ? "/** @} */ " : "") $0; open = 0; next }
/^[ \t]*\/\/( |$)/ {
  sub(/\/\//, "///")
  if (!was_comment) brief = ($0 ~ /^[ \t]*\/\/\/ [^@ ]/)
  if (brief) {
    if (!was_comment) sub(/\/\/\/ /, "/// @brief ")
    if (match($0, /\.( |$)/)) {
      $0 = substr($0, 1, RSTART) " @details" substr($0, RSTART + 1)
      brief = 0
    }
  }
  print; was_comment = 1; next
}
/^(class|struct) [A-Za-z_0-9]+ / {
  c = $2
  if (c ~ /_t$/) prevclass = c
  if (c ~ /_x$/) cls = c; else cls = ""
  if (cls != "" && !was_comment) {
    op = cls; sub(/_x$/, "", op)
    print doc("The operation object of lci::" op "(). Its positional arguments are the " \
              "constructor'"'"'s, the optional ones are set by setters, and call() or operator()() runs it. " \
              "One thread builds and runs an object; the operation is as thread-safe " \
              "as lci::" op "(), where it is described.") $0
  } else print
  was_comment = 0; next
}
/^};/ { cls = ""; print; was_comment = 0; next }
# The members that the macros generate, written out and documented.
/^[ \t]*LCI_CXX_[A-Z_0-9]+\(.*\)[ \t]*$/ {
  m = $0; sub(/^[ \t]*/, "", m)
  mac = m; sub(/\(.*/, "", mac)
  inner = m; sub(/^[^(]*\(/, "", inner); sub(/\)[ \t]*$/, "", inner)
  n = split(inner, a, ","); for (i = 1; i <= n; i++) a[i] = trim(a[i])
  ind = $0; sub(/[^ \t].*/, "", ind)
  out = ""
  if (mac == "LCI_CXX_RESOURCE_COMMON") {
    r = a[1]
    out = doc("The object the handle names; nullptr: the handle is empty.") r "_impl_t* p_impl = nullptr; " \
      doc("An empty handle (it names no object).") r "_t() = default; " \
      doc("A handle of the object at @p p (as p_impl holds it). @param p the library'"'"'s object, or nullptr for an empty handle.") r "_t(void* p); " \
      doc("The object the handle names. @return p_impl; an empty handle throws std::runtime_error.") r "_impl_t* get_impl() const; " \
      doc("Makes the handle name another object. @param p the library'"'"'s object, or nullptr.") "void set_impl(" r "_impl_t* p); " \
      doc("Whether both handles name the same object. @param other the other handle. @return true if they do.") "bool operator==(const " r "_t& other) const; " \
      doc("Whether the handles name different objects. @param other the other handle. @return true if they do.") "bool operator!=(const " r "_t& other) const; " \
      doc("The attributes of the object (" r "_attr_t).") "using attr_t = " r "_attr_t; " \
      doc("The object'"'"'s attributes. @return a copy of them; an empty handle throws std::runtime_error.") "attr_t get_attr() const;"
  } else if (mac == "LCI_CXX_ATTR_GETTER") {
    owner = prevclass; sub(/_t$/, "_attr_t", owner)
    out = doc("One attribute of the object: get_attr()." a[2] " (" owner "::" a[2] "). @return its value; an empty handle throws std::runtime_error.") a[1] " get_attr_" a[2] "() const;"
  } else if (mac == "LCI_CXX_SETTER" || mac == "LCI_CXX_ARG_SETTER") {
    out = setter(a[1], a[2], a[3], "")
  } else if (mac == "LCI_CXX_RUNTIME_ARG") {
    out = setter(a[1], "runtime_t", "runtime", "")
  } else if (mac == "LCI_CXX_DEVICE_ATTR") {
    out = setter(cls, a[1], a[2], "the device attribute `" a[2] "` (device_attr_t::" a[2] "); default: get_g_default_attr()." a[2] ".")
  } else if (mac == "LCI_CXX_RUNTIME_SETTERS") {
    c = a[1]
    out = setter(c, "size_t", "packet_return_threshold", "the runtime attribute runtime_attr_t::packet_return_threshold (reported, not used).") " " \
      setter(c, "int", "imm_nbits_tag", "the runtime attribute runtime_attr_t::imm_nbits_tag (reported, not used).") " " \
      setter(c, "int", "imm_nbits_rcomp", "the runtime attribute runtime_attr_t::imm_nbits_rcomp (reported, not used).") " " \
      setter(c, "bool", "alloc_default_device", "whether the runtime allocates its default device (runtime_attr_t::alloc_default_device).") " " \
      setter(c, "bool", "alloc_default_packet_pool", "whether the runtime allocates its default packet pool.") " " \
      setter(c, "bool", "alloc_default_matching_engine", "whether the runtime allocates its default matching engine.") " " \
      setter(c, "const char*", "name", "") " " setter(c, "void*", "user_context", "")
  } else if (mac == "LCI_CXX_COMM_SETTERS" || mac == "LCI_CXX_COMM_SETTERS_NO_CALL") {
    c = a[1]
    out = setter(c, "runtime_t", "runtime", "") " " setter(c, "packet_pool_t", "packet_pool", "") " " \
      setter(c, "device_t", "device", "") " " setter(c, "endpoint_t", "endpoint", "") " " \
      setter(c, "mr_t", "mr", "") " " setter(c, "void*", "user_context", "") " " \
      setter(c, "bool", "allow_done", "") " " setter(c, "bool", "allow_posted", "") " " \
      setter(c, "bool", "allow_retry", "") " " setter(c, "int", "rank", "") " " \
      setter(c, "void*", "local_buffer", "") " " setter(c, "size_t", "size", "") " " \
      setter(c, "comp_t", "local_comp", "")
    if (mac == "LCI_CXX_COMM_SETTERS") out = out " " runner("status_t", c)
  } else if (mac == "LCI_CXX_COLL_SETTERS") {
    c = a[1]
    out = setter(c, "device_t", "device", "") " " \
      setter(c, "endpoint_t", "endpoint", "accepted and not used: a collective runs on the device'"'"'s own endpoint.") " " \
      setter(c, "matching_engine_t", "matching_engine", "accepted and not used: a collective matches on the device'"'"'s own endpoint.") " " \
      setter(c, "runtime_t", "runtime", "")
  } else if (mac ~ /^LCI_CXX_NET_/) {
    c = a[1]
    if (mac == "LCI_CXX_NET_COMMON" || mac == "LCI_CXX_NET_TO_RANK")
      out = setter(c, "runtime_t", "runtime", "") " " setter(c, "device_t", "device", "") " " \
        setter(c, "void*", "user_context", "a value of the program'"'"'s, reported in the net_status_t of the completion (default nullptr).") " " runner("error_t", c)
    if (mac == "LCI_CXX_NET_TO_RANK")
      out = out " " setter(c, "int", "rank", "the target rank, in [0, get_rank_n()).") " " \
        setter(c, "endpoint_t", "endpoint", "accepted and not used (the emulation has one path per device).")
    if (mac == "LCI_CXX_NET_BUFFER")
      out = setter(c, "void*", "buffer", "") " " setter(c, "size_t", "size", "")
    if (mac == "LCI_CXX_NET_REMOTE")
      out = setter(c, "uint64_t", "offset", "") " " setter(c, "rmr_t", "rmr", "")
  } else if (mac ~ /^LCI_CXX_SIMPLE_OP[012]$/) {
    # The function first, so that the comment before the macro documents
    # it; then its operation object.
    ret = a[1]; op = a[2]; c = op "_x"; params = ""; sets = ""; ctor = ""
    for (i = 3; i + 1 <= n; i += 2) {
      params = params (params == "" ? "" : ", ") a[i] " " a[i + 1]
      sets = sets setter(c, a[i], a[i + 1], "") " "
    }
    out = "inline " ret " " op "(" params "); " \
      doc("The operation object of lci::" op "(). Its positional arguments are the constructor'"'"'s, the runtime is its optional argument, and call() or operator()() runs it. One thread builds and runs an object; the operation is as thread-safe as lci::" op "(), where it is described.") \
      "class " c " { public: " ctor_doc(c "(" params ")", c) c "(" params "); " sets \
      setter(c, "runtime_t", "runtime", "") " " runner(ret, c) " };"
  }
  if (out != "") { print ind out; was_comment = 0; next }
}
cls != "" && $0 ~ ("^[ \t]*(explicit )?" cls "\\(") {
  if (index($0, ")") > 0) print ctor_doc($0, cls) $0
  else { pending = cls; held = $0; sig = $0 }
  was_comment = 0; next
}
cls != "" && $0 ~ ("^[ \t]*" cls "&& [a-z_]+\\([^)]* v\\) \\{") {
  t = $0; sub(/^[ \t]*[a-z_]+&& /, "", t); nm = t; sub(/\(.*/, "", nm)
  ty = t; sub(/^[a-z_]+\(/, "", ty); sub(/ v\).*/, "", ty)
  op = cls; sub(/_x$/, "", op)
  d = argdesc(nm, op)
  print doc("Sets the optional argument `" nm "` of lci::" op "(). @param v " d \
            " @return this object, to set further arguments or to run it.") $0
  was_comment = 0; next
}
cls != "" && /^[ \t]*[a-z_A-Z0-9:*]+ call\(\) const/ {
  r = $0; sub(/^[ \t]*/, "", r); sub(/ call\(\).*/, "", r)
  op = cls; sub(/_x$/, "", op)
  print doc("Runs the operation with the arguments set so far." (r == "void" ? "" : " @return what lci::" op "() returns.")) $0
  was_comment = 0; next
}
cls != "" && /^[ \t]*[a-z_A-Z0-9:*]+ operator\(\)\(\) const/ {
  r = $0; sub(/^[ \t]*/, "", r); sub(/ operator.*/, "", r)
  op = cls; sub(/_x$/, "", op)
  print doc("Runs the operation (the same as call())." (r == "void" ? "" : " @return what lci::" op "() returns.")) $0
  was_comment = 0; next
}
/;[ \t]+\/\/ / { sub(/;[ \t]+\/\/ /, "; ///< "); print; was_comment = 0; next }
/^[ \t]+[a-z_]+,[ \t]+\/\/ / { sub(/,[ \t]+\/\/ /, ", ///< "); print; was_comment = 0; next }
{ print; was_comment = 0 }
' "$1"
