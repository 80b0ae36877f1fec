// Command tiny is the program the image tests put in an image.
package main

import "fmt"

func main() { fmt.Println("tiny") }
