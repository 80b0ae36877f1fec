// Package testapi holds a kind, Gadget, in two versions for the tests of
// package conversion: v2 is the hub and v1 a spoke. Each version has a field
// the other lacks (v1 a Color, v2 a Schedule), and the spoke keeps it in an
// annotation of the other version across a conversion.
package testapi

// Annotation keys under which a v1 Gadget and its v2 hub keep the field
// the other version lacks.
const (
	ColorAnnotation    = "test.bosun.dev/v1-color"
	ScheduleAnnotation = "test.bosun.dev/v2-schedule"
)
