//go:build wasip1

package main

import (
	"encoding/json"

	"github.com/mcphost/mcphost/abi"
	pdk "github.com/mcphost/mcphost/pdk/go"
)

const templateURI = "test://template/{id}/data"

func init() {
	// resources-list, resources-read-text
	pdk.Resource(abi.Resource{
		URI: "test://static-text", Name: "static-text", Title: "Static Text Resource",
		Description: "A static text resource for testing", MimeType: "text/plain",
	}, func(_ *pdk.Context, uri string) (*abi.ReadResourceResult, error) {
		return pdk.TextResource(uri, "text/plain", "This is the content of the static text resource."), nil
	})

	// resources-read-binary
	pdk.Resource(abi.Resource{
		URI: "test://static-binary", Name: "static-binary", Title: "Static Binary Resource",
		Description: "A static binary resource (image) for testing", MimeType: "image/png",
	}, func(_ *pdk.Context, uri string) (*abi.ReadResourceResult, error) {
		return pdk.BlobResource(uri, "image/png", redPixelPNG), nil
	})

	// resources-subscribe, resources-unsubscribe: the suite subscribes to
	// this URI. Subscriptions are the host's; the content never changes.
	pdk.Resource(abi.Resource{
		URI: "test://watched-resource", Name: "watched-resource", Title: "Watched Resource",
		Description: "A resource clients subscribe to", MimeType: "text/plain",
	}, func(_ *pdk.Context, uri string) (*abi.ReadResourceResult, error) {
		return pdk.TextResource(uri, "text/plain", "Watched resource content"), nil
	})

	// resources-templates-read
	pdk.ResourceTemplate(abi.ResourceTemplate{
		URITemplate: templateURI, Name: "template", Title: "Resource Template",
		Description: "A resource template with parameter substitution", MimeType: "application/json",
	}, func(_ *pdk.Context, uri string, vars map[string]string) (*abi.ReadResourceResult, error) {
		id := vars["id"]
		b, err := json.Marshal(templateData{ID: id, TemplateTest: true, Data: "Data for ID: " + id})
		if err != nil {
			return nil, err
		}
		return pdk.TextResource(uri, "application/json", string(b)), nil
	})
	pdk.CompleteTemplateVar(templateURI, "id", pdk.CompleteFrom("1", "2", "3", "123"))
}

// templateData is the JSON read from test://template/{id}/data.
type templateData struct {
	ID           string `json:"id"`
	TemplateTest bool   `json:"templateTest"`
	Data         string `json:"data"`
}
