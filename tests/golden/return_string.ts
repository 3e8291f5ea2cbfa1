// A string result renders raw, without quotes.
return "hello, model";
