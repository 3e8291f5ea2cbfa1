# An integer past 2**53 is not lossless JSON (JSON numbers are doubles).
return 2**80
