#define DIMS 3
