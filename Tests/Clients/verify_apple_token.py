"""Verifies an Apple identity token the way a third party would: PyJWT fetches the JWKS, picks
the key by kid, checks RS256, issuer, audience and expiry. Prints the claims as JSON."""
import json
import sys

import jwt

jwks_url, token, audience = sys.argv[1], sys.argv[2], sys.argv[3]
key = jwt.PyJWKClient(jwks_url).get_signing_key_from_jwt(token)
claims = jwt.decode(token, key.key, algorithms=["RS256"], audience=audience, issuer="https://appleid.apple.com")
print(json.dumps(claims, sort_keys=True))
