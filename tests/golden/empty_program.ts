// Neither output nor a result.
const unused = 1 + 1;
