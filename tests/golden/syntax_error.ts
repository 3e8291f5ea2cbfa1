// A program that does not parse.
const x = ;
