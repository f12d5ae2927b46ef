package gorun

// Undefined is the count or color that means "none": Count's answer when a
// Status does not hold a whole number of elements (MPI_UNDEFINED).
const Undefined = -1
