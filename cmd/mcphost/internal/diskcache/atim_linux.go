package diskcache

import "syscall"

// atim is the access time of st.
func atim(st *syscall.Stat_t) syscall.Timespec { return st.Atim }
