// Package mpooltest provides a stand-in for the rndv segment descriptor
// exchange, so that tests of mpool and btl/sm do not depend on rndv. It is a
// file in the session directory written with rename, read by polling.
package mpooltest
