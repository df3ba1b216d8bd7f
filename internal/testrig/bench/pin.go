package main

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// pinned runs f with the benchmark, and the servers it starts meanwhile,
// on CPU cpu alone, then gives the benchmark back the CPUs it had. On one
// CPU a server's CPU time per call is steady to a few per cent from round
// to round; on two, where the scheduler puts the server against the
// client (and a Go runtime's idle thread spinning on the other CPU) moved
// it by a third. A server started meanwhile keeps the one CPU, and its Go
// runtime sizes GOMAXPROCS to it.
func pinned(cpu int, f func() error) error {
	var all unix.CPUSet
	if err := unix.SchedGetaffinity(0, &all); err != nil {
		return fmt.Errorf("reading the CPUs the benchmark may run on: %w", err)
	}
	if !all.IsSet(cpu) {
		return fmt.Errorf("CPU %d is not one the benchmark may run on (%d are)", cpu, all.Count())
	}
	var one unix.CPUSet
	one.Set(cpu)
	if err := setThreadsAffinity(&one); err != nil {
		return err
	}
	err := f()
	if restore := setThreadsAffinity(&all); err == nil {
		err = restore
	}
	return err
}

// setThreadsAffinity sets the CPUs of every thread of the process: a
// thread's CPUs are its own, and a thread or process it starts inherits
// them.
func setThreadsAffinity(set *unix.CPUSet) error {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return err
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		if err := unix.SchedSetaffinity(tid, set); err != nil && err != unix.ESRCH { // ESRCH: the thread ended
			return fmt.Errorf("setting the CPUs of thread %d: %w", tid, err)
		}
	}
	return nil
}

// lastCPU returns the highest-numbered CPU the benchmark may run on.
func lastCPU() (int, error) {
	var all unix.CPUSet
	if err := unix.SchedGetaffinity(0, &all); err != nil {
		return 0, err
	}
	for cpu := len(all)*64 - 1; cpu >= 0; cpu-- {
		if all.IsSet(cpu) {
			return cpu, nil
		}
	}
	return 0, fmt.Errorf("no CPU to run on")
}
