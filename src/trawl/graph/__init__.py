"""The link graph as a whole: how much is each page worth to the others?"""
