# Integers up to 2**53 and floats print in shortest round-trip form.
return [1, 1.5, -2, 0.1 + 0.2, 1e21, 1e-7, 2**53, 123456789012, 5e-324, 1.0]
