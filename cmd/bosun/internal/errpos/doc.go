// Package errpos checks that errors about a source file name real places in
// it: each reads "FILE:LINE:COL: message", LINE is a line of the source,
// COL a byte column of that line and the error's byte offset the byte that
// LINE:COL names. The fuzz tests of packages dsl and gen hold every error
// of the parser, the checker and the generator to it.
package errpos
