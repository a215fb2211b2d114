"""The skeletons both families share: counting, training, classifying, and the DataFrame and
Arrow helpers under them."""
