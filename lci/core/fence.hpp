// Fences (fence.cpp): LCI_fence_wait and LCI_gfence_wait.
#pragma once

namespace lci {

struct endpoint;

// Until every operation this process started on `ep` completed locally.
void fence_wait(endpoint* ep);
// Until every process's operations on the endpoint group completed locally
// and at their targets (collective over the endpoint's peers).
// False once a peer failed (LCI_PEER_FAILURE=continue): the fence then
// does not wait for it.
bool gfence_wait(endpoint* ep);

}  // namespace lci
