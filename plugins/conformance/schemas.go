//go:build wasip1

package main

import "encoding/json"

// The schemas below are written out as JSON rather than derived from Go
// types: the suite checks keywords (oneOf, enumNames, $defs, ...) and exact
// default values that a derived schema would not have.

// userSchema is the form of test_elicitation (tools-call-elicitation): the
// suite's client answers {"username": ..., "email": ...}.
var userSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "username": {"type": "string", "description": "User's response"},
    "email": {"type": "string", "description": "User's email address"}
  },
  "required": ["username", "email"]
}`)

// sep1034Schema has a default for every primitive type (SEP-1034,
// elicitation-sep1034-defaults).
var sep1034Schema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "name": {"type": "string", "description": "User name", "default": "John Doe"},
    "age": {"type": "integer", "description": "User age", "default": 30},
    "score": {"type": "number", "description": "User score", "default": 95.5},
    "status": {"type": "string", "description": "User status", "enum": ["active", "inactive", "pending"], "default": "active"},
    "verified": {"type": "boolean", "description": "Verification status", "default": true}
  },
  "required": []
}`)

// sep1330Schema has the five enum forms of SEP-1330
// (elicitation-sep1330-enums): untitled and titled single-select, the legacy
// enumNames form, untitled and titled multi-select.
var sep1330Schema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "untitledSingle": {
      "type": "string",
      "description": "Select one option",
      "enum": ["option1", "option2", "option3"]
    },
    "titledSingle": {
      "type": "string",
      "description": "Select one option with titles",
      "oneOf": [
        {"const": "value1", "title": "First Option"},
        {"const": "value2", "title": "Second Option"},
        {"const": "value3", "title": "Third Option"}
      ]
    },
    "legacyEnum": {
      "type": "string",
      "description": "Select one option (legacy)",
      "enum": ["opt1", "opt2", "opt3"],
      "enumNames": ["Option One", "Option Two", "Option Three"]
    },
    "untitledMulti": {
      "type": "array",
      "description": "Select multiple options",
      "minItems": 1,
      "maxItems": 3,
      "items": {"type": "string", "enum": ["option1", "option2", "option3"]}
    },
    "titledMulti": {
      "type": "array",
      "description": "Select multiple options with titles",
      "minItems": 1,
      "maxItems": 3,
      "items": {
        "anyOf": [
          {"const": "value1", "title": "First Choice"},
          {"const": "value2", "title": "Second Choice"},
          {"const": "value3", "title": "Third Choice"}
        ]
      }
    }
  },
  "required": []
}`)

// regionSchema is the input schema of test_custom_header: region is
// mirrored in the Mcp-Param-Region header (x-mcp-header).
var regionSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "region": {"type": "string", "description": "The region", "x-mcp-header": "Region"}
  },
  "required": ["region"]
}`)

// jsonSchema202012 is the input schema of json_schema_2020_12_tool
// (SEP-1613, json-schema-2020-12): $schema, $defs and additionalProperties
// must reach the client unchanged, and (SEP-2106, 2026-07-28) so must the
// composition (allOf, anyOf), conditional (if/then/else) and anchor
// keywords: a name or an address, and a name with an address.
var jsonSchema202012 = json.RawMessage(`{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "$defs": {
    "address": {
      "$anchor": "address",
      "type": "object",
      "properties": {
        "street": {"type": "string"},
        "city": {"type": "string"}
      }
    }
  },
  "properties": {
    "name": {"type": "string"},
    "address": {"$ref": "#/$defs/address"}
  },
  "additionalProperties": false,
  "allOf": [{"anyOf": [{"required": ["name"]}, {"required": ["address"]}]}],
  "if": {"required": ["address"]},
  "then": {"required": ["name"]},
  "else": {}
}`)
