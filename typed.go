package gorun

import "unsafe"

// IsendSlice starts a send of the memory of s (native byte order) like
// Isend. The caller must not touch s until the request completes.
func IsendSlice[T Scalar](c *Comm, s []T, dest, tag int) (*Request, error) {
	return c.Isend(asBytes(s), dest, tag)
}

// IrecvSlice starts a receive into the memory of s like Irecv; the
// Status's Count is in bytes (see Count).
func IrecvSlice[T Scalar](c *Comm, s []T, source, tag int) (*Request, error) {
	return c.Irecv(asBytes(s), source, tag)
}

// SendrecvSlice is Sendrecv over the memory of two slices, whose element
// types may differ; the Status's Count is in bytes of recv (see Count).
func SendrecvSlice[T, U Scalar](c *Comm, send []T, dest, sendTag int, recv []U, source, recvTag int) (Status, error) {
	return c.Sendrecv(asBytes(send), dest, sendTag, asBytes(recv), source, recvTag)
}

// Count is the number of whole T elements in st (a receive's or a probe's),
// or Undefined when st.Count is not a multiple of T's size, like
// MPI_Get_count.
func Count[T Scalar](st Status) int {
	var z T
	size := int(unsafe.Sizeof(z))
	if st.Count < 0 || st.Count%size != 0 {
		return Undefined
	}
	return st.Count / size
}
