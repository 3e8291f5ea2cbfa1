// Constructor parameter properties are not erasable: the run fails before any code runs.
class Box<T> { constructor(public readonly value: T) {} }
return new Box<string>("v").value;
