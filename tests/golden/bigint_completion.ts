// BigInt is not JSON.
return 10n;
