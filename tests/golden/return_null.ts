// null is an explicit result.
return null;
