#define DIMS 4
