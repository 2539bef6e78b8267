#include "cproxypins.h"

#include <openssl/sha.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <stdlib.h>
#include <string.h>

struct cxhr_proxy_pins {
    uint8_t *hashes;
    size_t hash_count;
    uint8_t *key;
    size_t key_length;
    bool mismatch;
    /* Whether libcurl verifies the proxy's certificate chain (it does unless told not to). */
    bool chain_verified;
};

cxhr_proxy_pins *cxhr_proxy_pins_new(const uint8_t *hashes, size_t hash_count, const uint8_t *key, size_t key_length)
{
    cxhr_proxy_pins *pins = calloc(1, sizeof *pins);
    if (!pins) return NULL;
    if (hash_count > 0) {
        pins->hashes = malloc(hash_count * SHA256_DIGEST_LENGTH);
        if (!pins->hashes) { cxhr_proxy_pins_free(pins); return NULL; }
        memcpy(pins->hashes, hashes, hash_count * SHA256_DIGEST_LENGTH);
        pins->hash_count = hash_count;
    }
    if (key_length > 0) {
        pins->key = malloc(key_length);
        if (!pins->key) { cxhr_proxy_pins_free(pins); return NULL; }
        memcpy(pins->key, key, key_length);
        pins->key_length = key_length;
    }
    return pins;
}

void cxhr_proxy_pins_free(cxhr_proxy_pins *pins)
{
    if (!pins) return;
    free(pins->hashes);
    free(pins->key);
    free(pins);
}

bool cxhr_proxy_pins_take_mismatch(cxhr_proxy_pins *pins)
{
    bool mismatch = pins->mismatch;
    pins->mismatch = false;
    return mismatch;
}

/* Whether the certificate's public key is one of the pins. */
static bool key_is_pinned(const cxhr_proxy_pins *pins, X509 *certificate)
{
    unsigned char *der = NULL;
    int length = certificate ? i2d_X509_PUBKEY(X509_get_X509_PUBKEY(certificate), &der) : -1;
    if (length <= 0) return false;
    bool pinned = pins->key_length == (size_t)length && memcmp(pins->key, der, (size_t)length) == 0;
    if (!pinned && pins->hash_count > 0) {
        unsigned char digest[SHA256_DIGEST_LENGTH];
        SHA256(der, (size_t)length, digest);
        for (size_t i = 0; i < pins->hash_count && !pinned; i++)
            pinned = memcmp(pins->hashes + i * SHA256_DIGEST_LENGTH, digest, SHA256_DIGEST_LENGTH) == 0;
    }
    OPENSSL_free(der);
    return pinned;
}

/* The proxy's certificate verification: OpenSSL's own (its result counts only when libcurl
   asked for it), then the pins, which count always, as libcurl's pins do. */
static int verify_proxy(X509_STORE_CTX *store, void *argument)
{
    cxhr_proxy_pins *pins = argument;
    int verified = X509_verify_cert(store);
    if (!key_is_pinned(pins, X509_STORE_CTX_get0_cert(store))) {
        pins->mismatch = true;
        X509_STORE_CTX_set_error(store, X509_V_ERR_APPLICATION_VERIFICATION);
        return 0;
    }
    return pins->chain_verified ? verified : 1;
}

static CURLcode proxy_context(CURL *handle, void *context, void *argument)
{
    (void)handle;
    SSL_CTX *ssl_context = context;
    if (!(SSL_CTX_get_options(ssl_context) & SSL_OP_DONT_INSERT_EMPTY_FRAGMENTS)) return CURLE_OK;  /* the server's */
    cxhr_proxy_pins *pins = argument;
    /* Without SSL_VERIFY_PEER OpenSSL would go on past a key that is not pinned. */
    pins->chain_verified = (SSL_CTX_get_verify_mode(ssl_context) & SSL_VERIFY_PEER) != 0;
    SSL_CTX_set_verify(ssl_context, SSL_VERIFY_PEER, NULL);
    SSL_CTX_set_cert_verify_callback(ssl_context, verify_proxy, pins);
    return CURLE_OK;
}

CURLcode cxhr_easy_set_proxy_pins(CURL *handle, cxhr_proxy_pins *pins)
{
    CURLcode code = curl_easy_setopt(handle, CURLOPT_PROXY_SSL_OPTIONS, (long)CURLSSLOPT_ALLOW_BEAST);
    if (code == CURLE_OK) code = curl_easy_setopt(handle, CURLOPT_SSL_SESSIONID_CACHE, 0L);
    if (code == CURLE_OK) code = curl_easy_setopt(handle, CURLOPT_SSL_CTX_DATA, pins);
    if (code == CURLE_OK) code = curl_easy_setopt(handle, CURLOPT_SSL_CTX_FUNCTION, proxy_context);
    return code;
}
