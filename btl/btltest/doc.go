// Package btltest is the conformance suite every BTL passes: an executable
// form of the ownership, ordering and completion rules of package btl (the
// role of Open MPI's btl/template). Run(t, newPair) runs it against any
// btl.Module.
//
// Invariants checked: fragments arrive in Send order with their tag, source
// and exact bytes, for every payload size 0..MaxSendSize and header 0..MaxHeader;
// Send copies hdr always and payload when it reports copied=true; a send
// that reports copied=false gets exactly one SendDone, others none; no
// number of sends without receiver progress makes Send fail or lose data;
// RecvFuncs may Send; Sleep returns on Wake, on a sender's work and on its
// timeout. It uses only the btl.Module interface and never times performance.
package btltest
