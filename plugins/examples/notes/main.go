//go:build wasip1

// Command notes is an mcphost plugin that keeps notes in a directory the
// operator mounts read-write at /notes. It shows the host functions that
// talk back to the client:
//
//   - delete_note asks the user to confirm through the client
//     (elicitation, create_elicitation) and deletes only on an explicit yes;
//   - every change is logged to the client (notify_logging_message) and
//     announced to the sessions subscribed to the note's resource
//     (notify_resource_updated) and to every client as a change of the
//     resource list (notify_resource_list_changed);
//   - roots lists the client's roots (list_roots).
//
// Notes are also resources, note:///{name}, in Markdown.
package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/mcphost/mcphost/abi"
	pdk "github.com/mcphost/mcphost/pdk/go"
)

// main is required by Go but never runs: the host calls the exports after
// _initialize has run the init functions.
func main() {}

const noteTemplate = "note:///{name}"

func init() {
	pdk.Tool("add_note", "Add a note (Markdown). Its name is derived from the title unless given; "+
		"an existing note of that name is only overwritten with replace=true.",
		addNote, pdk.WithTitle("Add a note"), pdk.Destructive(true), pdk.OpenWorld(false))
	pdk.Tool("list_notes", "List the notes: name, title, resource URI, size and last change.",
		func(ctx *pdk.Context, _ struct{}) (noteList, error) {
			notes, err := listNotes()
			if notes == nil {
				notes = []Note{}
			}
			return noteList{Notes: notes}, err
		}, pdk.WithTitle("List notes"), pdk.ReadOnly(), pdk.OpenWorld(false))
	pdk.Tool("read_note", "Read a note's Markdown text.",
		func(ctx *pdk.Context, a nameArgs) (string, error) {
			_, text, err := readNote(a.Name)
			if errors.Is(err, fs.ErrNotExist) {
				return "", fmt.Errorf("there is no note named %q", a.Name)
			}
			return text, err
		}, pdk.WithTitle("Read a note"), pdk.ReadOnly(), pdk.OpenWorld(false))
	pdk.Tool("delete_note", "Delete a note, after the user confirms it through the client (elicitation). "+
		"Nothing is deleted unless the user accepts and confirms.",
		deleteNote, pdk.WithTitle("Delete a note"), pdk.Destructive(true), pdk.OpenWorld(false))
	pdk.Tool("roots", "List the roots (directories or other URIs) the client shares with servers.",
		listRoots, pdk.WithTitle("Client roots"), pdk.ReadOnly(), pdk.OpenWorld(false))

	pdk.ResourceLister(func(ctx *pdk.Context) ([]abi.Resource, error) {
		notes, err := listNotes()
		if err != nil {
			ctx.Log(pdk.LevelWarning, "cannot list notes", err.Error())
			return nil, nil
		}
		out := make([]abi.Resource, 0, len(notes))
		for _, n := range notes {
			size := n.Bytes
			out = append(out, abi.Resource{URI: n.URI, Name: n.Name, Title: n.Title, MimeType: "text/markdown", Size: &size})
		}
		return out, nil
	})
	pdk.ResourceTemplate(abi.ResourceTemplate{
		URITemplate: noteTemplate,
		Name:        "note",
		Title:       "Note",
		Description: "A note of the notes plugin, in Markdown.",
		MimeType:    "text/markdown",
	}, func(ctx *pdk.Context, uri string, vars map[string]string) (*abi.ReadResourceResult, error) {
		if checkName(vars["name"]) != nil {
			return nil, pdk.ResourceNotFound(uri)
		}
		_, text, err := readNote(vars["name"])
		if err != nil {
			return nil, err // fs.ErrNotExist becomes -32002
		}
		return pdk.TextResource(uri, "text/markdown", text), nil
	})
	pdk.CompleteTemplateVar(noteTemplate, "name", func(ctx *pdk.Context, value string, _ map[string]string) []string {
		notes, _ := listNotes()
		names := make([]string, len(notes))
		for i, n := range notes {
			names[i] = n.Name
		}
		return pdk.FilterPrefix(names, value)
	})
}

type noteList struct {
	Notes []Note `json:"notes"`
}

type nameArgs struct {
	Name string `json:"name" jsonschema:"pattern=^[a-z0-9][a-z0-9_-]{0\\,63}$" description:"The note's name, as list_notes shows it"`
}

type addArgs struct {
	Title   string `json:"title" jsonschema:"minLength=1,maxLength=200" description:"The note's title"`
	Text    string `json:"text" description:"The note's body, in Markdown"`
	Name    string `json:"name,omitempty" jsonschema:"pattern=^[a-z0-9][a-z0-9_-]{0\\,63}$" description:"Name of the note (default: derived from the title)"`
	Replace bool   `json:"replace,omitempty" description:"Overwrite an existing note of the same name"`
}

// AddResult is the structured result of add_note.
type AddResult struct {
	Note
	Replaced bool `json:"replaced" description:"An existing note was overwritten"`
}

func addNote(ctx *pdk.Context, a addArgs) (AddResult, error) {
	name := a.Name
	if name == "" {
		if name = slug(a.Title); name == "" {
			return AddResult{}, errors.New("cannot derive a name from this title; pass a name")
		}
	}
	if err := checkName(name); err != nil {
		return AddResult{}, err
	}
	n, replaced, err := writeNote(name, a.Title, a.Text, a.Replace)
	if err != nil {
		return AddResult{}, err
	}
	verb := "added"
	if replaced {
		verb = "replaced"
	}
	changed(ctx, n, verb, !replaced)
	return AddResult{Note: n, Replaced: replaced}, nil
}

// changed tells the client(s) that a note changed: a log message to the
// caller, resources/updated to the sessions subscribed to the note, and,
// when a note appeared or disappeared, resources/list_changed.
func changed(ctx *pdk.Context, n Note, verb string, listChanged bool) {
	ctx.Log(pdk.LevelInfo, fmt.Sprintf("note %q %s", n.Name, verb), map[string]any{"name": n.Name, "title": n.Title, "uri": n.URI})
	pdk.NotifyResourceUpdated(n.URI)
	if listChanged {
		pdk.NotifyResourceListChanged()
	}
}

type confirmDeletion struct {
	Confirm bool `json:"confirm" description:"Yes, delete this note"`
}

// DeleteResult is the structured result of delete_note.
type DeleteResult struct {
	Name    string `json:"name"`
	Title   string `json:"title"`
	Deleted bool   `json:"deleted"`
	// Outcome is "deleted", "declined", "cancelled" or "not confirmed".
	Outcome string `json:"outcome"`
}

func deleteNote(ctx *pdk.Context, a nameArgs) (DeleteResult, error) {
	n, _, err := readNote(a.Name)
	if errors.Is(err, fs.ErrNotExist) {
		return DeleteResult{}, fmt.Errorf("there is no note named %q", a.Name)
	}
	if err != nil {
		return DeleteResult{}, err
	}
	answer, action, err := pdk.ElicitAs[confirmDeletion](ctx,
		fmt.Sprintf("Delete the note %q (%s, %d bytes)? This cannot be undone.", n.Title, n.Name, n.Bytes))
	if err != nil {
		// No way to ask: never delete without a yes.
		ctx.Log(pdk.LevelWarning, fmt.Sprintf("note %q kept: no confirmation possible", n.Name), err.Error())
		return DeleteResult{}, fmt.Errorf("the note %q (%s) was NOT deleted: deleting needs the user's confirmation "+
			"through MCP elicitation, and it could not be asked (%v)", n.Title, n.Name, err)
	}
	res := DeleteResult{Name: n.Name, Title: n.Title}
	switch {
	case action == pdk.ActionAccept && answer.Confirm:
		if err := os.Remove(notePath(n.Name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return DeleteResult{}, err
		}
		res.Deleted, res.Outcome = true, "deleted"
		changed(ctx, n, "deleted", true)
		return res, nil
	case action == pdk.ActionAccept:
		res.Outcome = "not confirmed"
	case action == pdk.ActionDecline:
		res.Outcome = "declined"
	default:
		res.Outcome = "cancelled"
	}
	ctx.Log(pdk.LevelInfo, fmt.Sprintf("note %q kept: %s by the user", n.Name, res.Outcome), nil)
	return res, nil
}

// RootList is the structured result of roots.
type RootList struct {
	Roots []pdk.Root `json:"roots"`
}

func listRoots(ctx *pdk.Context, _ struct{}) (RootList, error) {
	roots, err := ctx.ListRoots()
	if err != nil {
		return RootList{}, fmt.Errorf("cannot list the client's roots (MCP roots/list): %v", err)
	}
	if roots == nil {
		roots = []pdk.Root{}
	}
	return RootList{Roots: roots}, nil
}
