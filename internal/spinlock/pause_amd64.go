package spinlock

// Pause is the CPU's spin-wait hint (PAUSE): a loop that polls a word
// another core will write leaves the core's resources to its hyperthread
// sibling meanwhile and does not flood the memory system with loads.
func Pause()
