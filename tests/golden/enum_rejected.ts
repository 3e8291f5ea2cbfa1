// enum is not erasable syntax: the run fails before any code runs.
console.log("never printed");
enum Color { Red, Green }
return Color.Red;
