// Package pmi speaks the simple Process Management Interface wire protocols
// (PMI-1 and PMI-2) that Slurm's `srun --mpi=pmi2` and MPICH's Hydra offer
// to the processes they start over the socket named by PMI_FD.
//
// The package has two layers:
//   - wire.go: encoding and decoding of one message in either framing. It
//     holds no state and is shared by the client here and by any server
//     (gorun's own PMI-2 server uses it unchanged).
//   - client.go: the client a rank uses at Init: fullinit (falling back to
//     PMI-1 when the server speaks only that), kvs put / fence / get, job
//     attributes, finalize.
//   - mapping.go: PMI_process_mapping, the "which ranks share a node" answer.
//   - server.go: the PMI-2 server gorun runs for a job across hosts (a
//     key-value space whose puts become visible at the fence that follows
//     them; a fence fails for all when a rank ends without joining it).
//
// Framing:
//
//	PMI-1: "cmd=NAME key=value key=value\n"  (space separated, one line)
//	PMI-2: "%-6d" length, then "cmd=NAME;key=value;key=value;"
//	       (';' inside a value is written ";;")
//
// Both protocols start with the PMI-1 line "cmd=init pmi_version=V
// pmi_subversion=S"; a PMI-2 client switches to the PMI-2 framing after the
// server's answer.
//
// Invariants: decoding never panics and never allocates more than the
// message's own bounded length (MaxLineV1, MaxBodyV2); encoding a valid Msg
// and decoding it yields the same Msg (see the Fuzz targets).
package pmi
