package tiny

// Gamma is a type whose method uses a.go.
type Gamma struct {
	Name  string `json:"name"`
	inner int
	*task
}

// Kind is an exported type of an iota block.
type Kind int

const limit = 3

// run uses a.go.
func (Gamma) run() { Alpha("") }

// Runner is an exported interface.
type Runner interface {
	Run(n int) error
	fmtStringer
}

type fmtStringer interface{ String() string }

// Map is a generic func.
func Map[T any, U comparable](xs []T, f func(T) U) []U { return nil }

// other is a method of a.go's type.
func (t *task) other() {}
