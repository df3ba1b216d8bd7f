package config

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
)

// Environment variables in the file: every string value may hold
// ${NAME}, the value of the environment variable NAME, and
// ${NAME:-default}, that value or default when NAME is unset or empty
// (hyper-mcp's configuration rules, src/expand_env.rs). $${ writes a
// literal ${, and $NAME is left as it is. Values are expanded after the
// file is parsed, so a variable's value is never read as TOML. Secrets are
// not expanded: a secret is "env:NAME", read when a plugin asks for it and
// kept out of the config.

// expandEnv returns v, a decoded value at p, with the environment
// variables in its strings expanded, reporting each reference that fails.
func (d *decoder) expandEnv(v any, p keyPath) any {
	switch v := v.(type) {
	case string:
		s, err := expandString(v)
		if err != nil {
			d.errorf(p, "%v", err)
		}
		return s
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			switch s, isString := v[k].(string); {
			case k == "secrets" && len(p) == 2 && p[0] == "plugins":
				d.refuseExpandedSecrets(v[k], p.add(k))
			case isString:
				// A value that does not expand is dropped, so that it
				// reports no more than its own error.
				if x, err := expandString(s); err != nil {
					d.errorf(p.add(k), "%v", err)
					delete(v, k)
				} else {
					v[k] = x
				}
			default:
				v[k] = d.expandEnv(v[k], p.add(k))
			}
		}
	case []map[string]any: // an array of tables
		for i, e := range v {
			d.expandEnv(e, p.add(index(i)))
		}
	case []any:
		for i, e := range v {
			v[i] = d.expandEnv(e, p.add(index(i)))
		}
	}
	return v
}

// refuseExpandedSecrets reports the secrets written as ${NAME}, which
// would put the secret itself into the config, pointing to "env:NAME".
func (d *decoder) refuseExpandedSecrets(v any, p keyPath) {
	t, _ := v.(map[string]any)
	for _, k := range slices.Sorted(maps.Keys(t)) {
		if s, ok := t[k].(string); ok && strings.Contains(s, "${") {
			name, _, _ := strings.Cut(strings.TrimPrefix(s, "${"), "}")
			name, _, _ = strings.Cut(name, ":-")
			d.errorf(p.add(k), `secrets are not expanded: write "env:%s" to read the variable when the plugin asks`, name)
			delete(t, k)
		}
	}
}

// expandString expands the references in s. An unset or empty variable
// without a default, and a "${" that starts no valid reference, are
// errors naming the variable, never a value.
func expandString(s string) (string, error) {
	if !strings.Contains(s, "$") {
		return s, nil
	}
	var b strings.Builder
	var missing []string
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			break
		}
		if i > 0 && s[i-1] == '$' { // $${: a literal ${
			b.WriteString(s[:i-1] + "${")
			s = s[i+2:]
			continue
		}
		b.WriteString(s[:i])
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			return "", fmt.Errorf(`"${" starts no reference: write ${NAME} or ${NAME:-default} (NAME of letters, digits and '_'), or $${ for a literal ${`)
		}
		ref := s[i+2 : i+end]
		name, def, hasDefault := strings.Cut(ref, ":-")
		if !isEnvName(name) {
			return "", fmt.Errorf(`"${" starts no reference: write ${NAME} or ${NAME:-default} (NAME of letters, digits and '_'), or $${ for a literal ${`)
		}
		switch val := os.Getenv(name); {
		case val != "":
			b.WriteString(val)
		case hasDefault:
			b.WriteString(def)
		default:
			missing = append(missing, name)
		}
		s = s[i+end+1:]
	}
	if len(missing) > 0 {
		return "", fmt.Errorf("environment variable %s is unset or empty and has no default (write ${%s:-default} for one)",
			strings.Join(missing, ", "), missing[0])
	}
	return b.String(), nil
}

// isEnvName reports whether s is a variable name: [A-Za-z_][A-Za-z0-9_]*.
func isEnvName(s string) bool {
	for i, r := range s {
		if r != '_' && !('a' <= r && r <= 'z') && !('A' <= r && r <= 'Z') && (i == 0 || !('0' <= r && r <= '9')) {
			return false
		}
	}
	return s != ""
}
