// Package rndv is the rendezvous point of a job's ranks: the business cards
// each rank publishes at Init, and the descriptor of the shared-memory
// segment that local rank 0 creates, all kept as small files in the job's
// session directory.
//
// Files, in the session directory:
//
//	card.<rank>   one business card per rank (see FormatCard)
//	segment       the segment descriptor (see FormatSegment)
//	gone.<rank>   written by the launcher when a rank ended without a
//	              card (see FormatGone); WaitCards fails on it at once
//	cards         every card, gathered by rank 0 (see WaitAllCards), so
//	              that each rank reads one file instead of n
//	.<file>.wake  FIFOs the ranks waiting for "cards" or "segment" sleep
//	              on until the publisher wakes them (see wakeFIFO)
//
// The formats are line-oriented text: a first line "<kind> <version>",
// then one "key value" line per field, each key exactly once, in any order.
//
// Invariants:
//   - A file is written to a temporary name in the same directory and then
//     renamed into place, so a reader sees either no file or a whole one.
//   - Readers validate every field (version, ranges, sizes, characters) and
//     return an error naming the file, the field, the value and what is
//     allowed; they never panic on any input (see the Fuzz targets).
//   - Formatting a valid value and parsing it back yields the same value.
//
// The package never creates or removes the session directory itself; the
// launcher owns it.
package rndv
