/// The help's text after the options: what a run does, the differences from curl, the exit statuses.
enum FetchHelp {
    static let discussion = CommandLineParser.paragraphs("""
        The body goes to standard output (or -o FILE, -O); everything else (-v, --states, the \
        progress bar, errors) to standard error. Several URLs are fetched one after another, \
        or at once with -Z (at most --parallel-max at a time, one progress line for all), each \
        to its own file: -o once per URL, in order, or -O for all of them; --output-dir puts \
        those files in a folder. https requests use HTTP/2 where the server offers it (one \
        connection shared by the requests to one server); --http1.1 keeps them on HTTP/1.1. Requests are asynchronous unless --sync is \
        given. The http_proxy, https_proxy, all_proxy and no_proxy environment variables are \
        honoured as curl honours them; -x wins over them.

        With --cache DIR, responses are kept in an HTTP cache (RFC 9111's private cache) in \
        DIR, which later runs naming DIR share: a fresh stored response answers without the \
        network, a stale one is validated with the server (a 304 is never shown: the stored \
        response is). -i shows a stored response's own status line and fields, with an Age \
        field. -H Cache-Control and Pragma fields (no-cache, no-store, max-age, max-stale, \
        min-fresh, only-if-cached) steer the cache and still go to the server; only-if-cached \
        with nothing stored answers 504 without the network. A successful POST, PUT, DELETE \
        (any method but GET, HEAD, OPTIONS, TRACE) removes the stored responses of its URL. \
        xhr adds no Cache-Control or Pragma field of its own.

        DIFFERENCES FROM CURL
          Redirects are followed by default (-L is accepted and changes nothing); \
        --no-location returns them.
          Compressed bodies are asked for and decoded by default (--compressed changes \
        nothing); --no-compressed gets the body as sent.
          -r takes one range, START-END or START-.
          --anyauth picks the strongest of NTLM, Digest and Basic the server offers, never \
        Negotiate (curl's may answer with the tickets of the default credential cache, \
        whatever -u says): ask for Kerberos with --negotiate.
          --tlsv1.3 with a lower --tls-max is refused before anything is sent (exit 2; curl \
        tries and exits 35); --proto ignores names it does not know, silently (curl names them).
          An encrypted --key without --pass exits 58 at once (curl lets OpenSSL ask for the \
        password on the terminal); --cert-type and --key-type take no ENG.
          -J refuses a name that is . or .. or holds a control character (exit 23); \
        the name is always the last segment of its path, in the current folder.
          -C needs -o FILE (a FILE.part an earlier xhr left is continued the library's way).
          --retry writes only the last attempt's body and retries only 429 and 503 answers \
        (curl: also 408, 500, 502, 504).
          %{size_download} counts the body bytes written (decoded), where curl counts the \
        bytes received.
          -i, -I, -D and -v show the final response's head only, not each redirect's.
          With several URLs, -O names every file from its URL (curl: --remote-name-all), \
        and -i, -I, -D, -w, -C, -v, --states and --sync are refused.
          --http2 is the default (and changes nothing): HTTP/2 through TLS's ALPN, HTTP/1.1 \
        for plain http. --http2-prior-knowledge is refused: with libcurl 7.88 the second \
        request on such a connection fails (curl issue 10634).
          Cookies: every run uses a persistent cookie jar (by default the library's store \
        file); -c FILE makes FILE that store (read at the start, kept up to date) and writes \
        every cookie to it at the end, session cookies too, as curl does. -b FILE adds the \
        cookies of a Netscape-format file to the jar. -b 'NAME=VALUE; …' is a Cookie header \
        as with curl, but when the jar has cookies for the URL too, the pairs join them for \
        the transfer (one Cookie line, in the jar's order) and leave the jar after it. \
        --no-cookies sends and stores none (a -b string still goes).
          The User-Agent is the library's (CurlXHR/VERSION libcurl/VERSION) unless -A or -H \
        sets one; -A '' keeps it. -e 'URL;auto' sends URL (no automatic referer on redirects).
          A status line without a reason phrase is shown with the standard one \
        ("HTTP/1.1 201 Created" where curl shows "HTTP/1.1 201").
          Errors are one line, "xhr: <reason>", not curl's "curl: (N) <reason>".
          Options curl has and xhr does not know are refused by name (exit 2), as curl \
        refuses options it does not know.

        EXIT STATUS
          0   the request completed (any HTTP status unless -f or --fail-with-body)
          1   another failure (also: --offline and nothing stored for the URL)
          2   the command line is wrong (an unknown option, named; a missing value), or the \
        library refused an argument (a header, proxy or scheme, or a --cache folder)
          3   the URL is malformed (a port over 65535, no host, a bad {} or [] pattern, more \
        than 100000 URLs from one)
          5   the proxy could not be reached or broke the connection
          6   the host name did not resolve
          7   the connection failed or broke
          8   the response was not valid HTTP
          22  -f or --fail-with-body, and an HTTP status of 400 or more
          23  the output file could not be written (or -O found no file name in the URL)
          26  the file to send (or -F name=<FILE, or a -K config file) could not be read
          28  a timeout ran out (--max-time, --connect-timeout, --headers-timeout, --idle-timeout)
          33  -C, and the server answered 200 rather than the range
          35  TLS handshake or certificate verification failed
          42  the request was aborted
          45  --interface names an interface or address that cannot be used
          47  too many redirects
          49  a --resolve or --connect-to entry is malformed
          58  the client certificate (--cert, --key, --proxy-cert) could not be read or unlocked
          67  Kerberos tickets or an OAuth2 token could not be obtained
          90  the server's (the proxy's) public key is not one of --pinnedpubkey's (--proxy-pinnedpubkey's)
          97  the SOCKS proxy refused the login (or the GSS-API handshake) or the connection
        """)
}
