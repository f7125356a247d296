"""How does a request reach the network safely? The only package that opens sockets."""
