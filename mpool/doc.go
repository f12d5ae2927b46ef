// Package mpool creates, attaches and lays out the one shared-memory segment
// that the ranks of a job on one machine exchange messages through.
//
// Its one job: turn (number of local ranks, sizing parameters) into a file
// mapping that every local rank sees at the same offsets. It knows regions
// and bytes, never what btl/sm stores in them.
//
// Layout (see Plan, the single pure function used by the creator and every
// attacher): a 256-byte Header, then one region per local rank holding its
// control block, its receive FIFO, its fast boxes, its eager fragments and
// its max-size fragments. Every region starts on a 64-byte cache line.
// Memory is O(N) in the number of local ranks (Open MPI's smcuda is O(N²):
// a FIFO per pair):
//
//	bytes(N) = 256 + N·(Ctl + Slots·SlotSize + Boxes·BoxSize + EagerFrags·EagerFragSize + MaxFrags·MaxFragSize)
//
// rounded up to a 4 KiB page. Without boxes (Ctl 256 B, 256 slots of 128 B,
// 32 fragments of 4 KiB+64 B and 32 of 32 KiB+64 B) a rank costs 1.16 MiB
// (1,216,768 B): N=2 2.3 MiB, N=8 9.3 MiB, N=32 37.1 MiB, N=64 74.3 MiB
// (pinned by TestPlanBytesPerN). btl/sm asks for min(32, N-1) fast boxes
// per rank, of 32 KiB+128 B from 18 ranks (1.87× at N=64: 138.5 MiB) and
// larger below (256 KiB up to 5 ranks: its Config.BoxSize), and up to 4
// ranks twice the max-size fragments (N=2: 4.8 MiB, N=8: 16.3 MiB; its
// TestSegmentBytesPerN).
//
// Life of a segment: local rank 0 creates the file
// <dir>/gorun-<uid>-<jobid>-<random>.seg (dir is btl_sm_backing_directory,
// /dev/shm by default, or the session directory when that is missing or
// read-only; a directory another user owns or may write without the sticky
// bit is refused), O_EXCL|O_NOFOLLOW and mode 0600, under a name no other
// user can predict (a taken name is retried with a fresh one), reserves
// every byte with fallocate (so running out of memory is an error at
// start-up, never a SIGBUS later), writes the Header with a random Token and
// publishes the descriptor (path, token, device, inode) through rndv, in the
// session directory only the job's user can write. The others wait for the
// descriptor, open the file O_NOFOLLOW, refuse it unless it is a regular file
// of their user, mode 0600, with the descriptor's device and inode, map it
// and check the Header and its Token (trust nothing we did not create). Each rank
// then calls Attach; the rank whose Attach brings the counter to N unlinks the
// file, so that from then on no crash can leave it behind (the launcher
// removes it by name before that point).
//
// Invariants: the segment holds offsets, never pointers, and offset 0 (the
// Header) is never a valid region offset, so 0 means nil. Shared structures
// are Go structs whose offsets tests pin with unsafe.Offsetof. The package
// never interprets a region's contents.
package mpool
