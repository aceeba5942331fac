// Linked with the whole of one layer's library and only the layers below it
// (tests/layering/CMakeLists.txt): that it links at all is the test.
int main() { return 0; }
