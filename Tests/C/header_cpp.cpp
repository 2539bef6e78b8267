// curlxhr.h compiles as C++ (extern "C", no C-only constructs) and links.
#include <curlxhr.h>
#include <cstdio>

int main()
{
  cxhr_request *request = cxhr_request_create();
  bool refused = !cxhr_send(request, nullptr, 0, 0);   // not opened yet
  cxhr_request_destroy(request);
  std::printf("%d passed, %d failed\n", refused ? 1 : 0, refused ? 0 : 1);
  return refused ? 0 : 1;
}
